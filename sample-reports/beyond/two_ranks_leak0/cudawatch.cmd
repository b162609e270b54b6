/work/main/target/release/cudawatch --color never run --stages plain\,memory --out-dir /root/out/cap/two_ranks_leak0/run --format json -- python3 two_ranks.py 
