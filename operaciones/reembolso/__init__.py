"""El reembolso de una devolución: todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
