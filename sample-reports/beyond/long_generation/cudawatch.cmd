/work/main/target/release/cudawatch --color never run --stages plain\,memcheck --steps 3 --out-dir /root/out/cap/long_generation/run --format json -- python3 long_generation.py 
