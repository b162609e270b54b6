/work/main/target/release/cudawatch --color never run --out-dir /root/out/cap/mps/run-torch --format json -- python3 /work/main/tests/gpu/torch_train_clean.py 
