"""Lo que llega en directo (SSE): el reparto de los avisos de ``LISTEN`` a los flujos
abiertos (``eventos``), la bandeja en vivo (``bandeja``) y la respuesta del agente según se
escribe (``directo``)."""
