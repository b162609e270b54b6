/work/main/target/release/cudawatch --color never run --out-dir /root/out/cap/empty_then_reduce/run --timeout 200 --format json -- python3 empty_then_reduce.py 
