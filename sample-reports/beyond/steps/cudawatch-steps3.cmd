/work/main/target/release/cudawatch --color never run --steps 3 --out-dir /root/out/cap/steps/run-steps3 --format json -- python3 long_training.py 
