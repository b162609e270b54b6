/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /tmp/cap/jax_pallas_accumulate/run-cudawatch-fixed --format json -- python3 jax_pallas_accumulate.py 
