/work/main/target/release/cudawatch --color never run --stages plain\,memcheck --timeout 150 --out-dir /root/out/cap/steps/run-whole --format json -- python3 long_training.py 
