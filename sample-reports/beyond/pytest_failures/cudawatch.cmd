/work/main/target/release/cudawatch --color never run --stages plain\,memcheck\,csan --out-dir /root/out/beyond/pytest_failures/run --format json -- python3 -m pytest 
