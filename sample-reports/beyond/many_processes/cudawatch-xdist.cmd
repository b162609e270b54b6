/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /root/out/beyond/many_processes/run-xdist --format json -- python3 -m pytest -n 2 
