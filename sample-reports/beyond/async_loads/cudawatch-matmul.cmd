/work/main/target/release/cudawatch --color never run --stages plain\,ncu --out-dir /root/out/cap/async_loads/run-matmul --format json -- python3 /root/out/cap/async_loads/matmul.py 
