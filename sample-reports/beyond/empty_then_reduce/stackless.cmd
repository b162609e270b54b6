/work/main/target/release/cudawatch --color never run --stages plain\,initcheck --out-dir /tmp/w/cap/empty_then_reduce/run-stackless --format json -- python3 empty_then_reduce.py 
