bash -c echo\ launcher\ pid\ \$\$\ pgid\ \$\(ps\ -o\ pgid=\ \$\$\)\;\ torchrun\ --standalone\ --nproc_per_node=2\ /tmp/tree_probe.py 
