"""The PySpark pipeline that analyses many runs."""
