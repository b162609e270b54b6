/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /root/out/cap/manual_graphs/run-cudagraph_step --format json -- python3 /work/main/tests/gpu/real/cudagraph_step.py 
