/tmp/tmp.EDSbu5qdZI/device_assert 
