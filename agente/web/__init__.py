"""Canal web: API HTTP (FastAPI), páginas del cliente y del encargado, eventos y métricas.

Las rutas son finas: autentican, validan la forma de la petición y llaman a la capa de
servicio (``agente.servicio``); los errores del dominio se traducen a HTTP en un solo
sitio (``agente/web/infra/errores_http.py``). Las salas: ``rutas/``, ``esquemas/``,
``entrada/`` (quién entra), ``en_vivo/`` (SSE), ``infra/`` y ``protocolo_langgraph/``.
"""
