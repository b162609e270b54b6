/work/main/target/release/cudawatch --color never run --stages plain\,memcheck --timeout 120 --out-dir /tmp/cap/jax_oom/run-cudawatch --format json -- python3 jax_oom.py 
