/work/main/target/release/cudawatch --color never run --timeout 240 --out-dir /root/out/cap/manual_graphs/run-graph_oob --format json -- /root/out/cap/.bin/graph_oob 
