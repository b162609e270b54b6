/work/main/target/release/cudawatch --color never run --steps 3 --timeout 240 --out-dir /root/out/cap/long_inference/run --format json -- python3 long_inference.py 
