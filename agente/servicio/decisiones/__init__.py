"""Lo que cierra una pausa: ``decidir`` (la bandeja y la decisión del encargado, validada
en ``validacion``), ``reclamos`` («lo atiendo yo»), la ``ficha`` de una aprobación, la
``caducidad``, la ``conciliacion`` (lo que una caída dejó a medias) y ``decididas`` (el
historial y su CSV).
"""
