#!/usr/bin/env python3
"""Write the ledger to the warehouse."""
print("exporting")
