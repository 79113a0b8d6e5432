"""El vale de compensación: todo lo suyo en esta carpeta (``operaciones/carpetas.py``)."""
