// Until the SQLite store, the imports and the copies have modules of their
// own (issue 23's plan, steps 7-9), code that imports Archive sees the store
// protocols and values as before.
@_exported import Stores
