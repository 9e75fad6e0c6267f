"""datetime64 and timedelta64 under tracing: held as int64 counts with the unit in the dtype.

`units.py` casts counts between units as NumPy does, `array.py` is the traced array
(`DatetimeTracer`), `ufuncs.py` NumPy's time loops, `functions.py` the NumPy functions
that take time arrays.  The boundary (`tracer.trace`, `boundary.call_params` and
`finish_call`) passes time arguments to the program as int64 views of the caller's memory
and views int64 results back as their dtype.
"""
