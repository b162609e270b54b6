/work/main/target/release/cudawatch --color never run --out-dir /root/out/cap/mps/run --format json -- /root/out/cap/.bin/coalescing 
