/work/main/target/release/cudawatch --color never run --timeout 300 --out-dir /root/out/cap/cudnn_benchmark/run --format json -- python3 cudnn_benchmark_step.py 
