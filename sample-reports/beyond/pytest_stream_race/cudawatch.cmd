/work/main/target/release/cudawatch --color never run --stages plain\,csan --out-dir /root/out/beyond/pytest_stream_race/run --format json -- python3 -m pytest 
