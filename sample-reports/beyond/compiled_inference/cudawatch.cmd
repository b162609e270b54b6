/work/main/target/release/cudawatch --color never run --stages plain --steps 3 --out-dir /root/out/cap/compiled_inference/run --format json -- python3 compiled_inference.py 
