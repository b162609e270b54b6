/work/main/target/release/cudawatch --color never run --stages plain\,ncu --out-dir /root/out/cap/faulting_launch/run-misaligned --format json -- /root/out/cap/.bin/misaligned 
