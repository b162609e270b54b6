/work/main/target/release/cudawatch --color never run --timeout 200 --out-dir /root/out/beyond/ddp_ports/run-torchrun --format json -- torchrun --nproc_per_node=1 ddp_step.py 
