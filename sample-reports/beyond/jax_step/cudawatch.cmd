/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /tmp/cap/jax_step/run-cudawatch --format json -- python3 jax_step.py 
