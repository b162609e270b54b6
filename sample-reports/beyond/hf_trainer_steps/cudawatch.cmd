/work/main/target/release/cudawatch --color never run --steps 2 --timeout 240 --out-dir /root/out/cap/hf_trainer_steps/run --format json -- python3 hf_trainer.py 
