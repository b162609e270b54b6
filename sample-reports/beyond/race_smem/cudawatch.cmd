/work/main/target/release/cudawatch --color never run --stages plain\,racecheck\,ncu --out-dir /root/out/cap/race_smem/run --format json -- /root/out/cap/.bin/smem_race 
