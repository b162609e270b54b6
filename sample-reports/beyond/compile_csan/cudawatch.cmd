/work/main/target/release/cudawatch --color never run --stages plain\,csan --out-dir /root/out/cap/compile_csan/run --format json -- python3 compile_csan.py 
