// Adjoints of kernels/box_box.wgsl's pair functions (oracle/collide/box_box.py); conventions in kernels/adjoint/collide.wgsl.
