"""Lo que pide quien opera: ``salud`` (``/healthz``, ``/metrics``), ``hilo`` (qué guarda el
checkpointer, ``agente hilo``), ``prefijos`` (ids por prefijo en la CLI) y ``arranque``
(token y demo antes de que exista un servicio); para la web y la CLI, ``plataforma`` (la
base y las migraciones), ``proceso`` (la parada limpia y el embebido) y ``demo`` (catálogo,
buzón y piezas de la demo).
"""
