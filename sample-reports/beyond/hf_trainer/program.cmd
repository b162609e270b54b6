python3 /work/main/tests/gpu/real/hf_trainer.py 
