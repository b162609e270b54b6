python3 -c import\ runpy\,\ sys\;\ sys.argv=\[\"x\"\]\;\ exec\(open\(\"oob_kernel_rank1.py\"\).read\(\).split\(\"rank\,\ world\"\)\[0\]\) 
