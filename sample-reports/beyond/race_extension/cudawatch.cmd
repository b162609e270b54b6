/work/main/target/release/cudawatch --color never run --stages plain\,racecheck\,ncu --out-dir /root/out/cap/race_extension/run --format json -- python3 /work/main/tests/gpu/real/user_kernel_race.py 
