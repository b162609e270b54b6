"""torch.cuda._sanitizer of the fake torch: the object real torch keeps."""


class CUDASanitizer:
    def __init__(self):
        self.enabled = False

    def disable(self):
        self.enabled = False


cuda_sanitizer = CUDASanitizer()
