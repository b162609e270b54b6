/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /root/out/beyond/many_processes/run-cudagraphs --format json -- python3 compiled_cudagraphs.py 
