/tmp/tmp.EDSbu5qdZI/graph_wild_index 
