"""Lo que rodea a todas las rutas: middleware ASGI (cuerpo, límites, carácter nulo, log de
cada petición), errores del dominio traducidos a HTTP, dependencias de FastAPI, salud y
disponibilidad, métricas, hilos de las ejecuciones, parada ordenada, recolector y el
documento OpenAPI tal como se comporta la API."""
