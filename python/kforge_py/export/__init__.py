"""`kforge export`'s Python side: write_package.py writes an exported folder's Python package
(the torch.library custom op, from the template op_runtime.py), model_new.py (class ModelNew, for
problems imported from KernelBench files) and the README."""
