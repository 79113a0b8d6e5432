"""El turno del cliente y cómo se ejecuta el agente sobre un hilo.

``turnos`` (abrir, leer, conversar), ``ejecucion`` con ``candados`` y ``limite``, el
``desenlace`` de cada ejecución, los mensajes (``mensajes``, ``retenidos``), la ``escucha``
de avisos entre procesos, el ``ritmo`` (429) y lo que enseña el ``portal_cliente``.
"""
