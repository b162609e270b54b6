/work/main/target/release/cudawatch --color never run --stages plain\,memcheck\,racecheck\,csan\,memory --out-dir /root/out/beyond/pytest_embedding_xdist/run --format json -- python3 -m pytest -n 2 
