/work/main/target/release/cudawatch --color never run --stages plain\,ncu --out-dir /root/out/cap/async_loads/run-async_loads --format json -- /root/out/cap/.bin/async_loads 
