"""Las rutas de la API y de las páginas, un módulo por tema: autentican, validan la forma
de la petición (``agente/web/esquemas/``) y llaman al servicio. Nada de lógica de negocio."""
