"""Canal web: API HTTP (FastAPI), páginas del cliente y del encargado, eventos y métricas.

Las rutas son finas: autentican, validan la forma de la petición y llaman a la capa de
servicio (``agente.servicio``); los errores del dominio se traducen a HTTP en un solo
sitio (``errores_http``).
"""
