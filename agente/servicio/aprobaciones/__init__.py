"""Una aprobación pendiente: su fila en la cola (``cola``), la autoridad que exige y las
firmas que la cumplen (``firmas``) y los avisos a quien debe firmar (``avisos_firma``).

La escriben el final de un turno (``conversaciones.desenlace``) y las decisiones.
"""
