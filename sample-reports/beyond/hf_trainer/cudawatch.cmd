/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /root/out/cap/hf_trainer/run --format json -- python3 hf_trainer.py 
