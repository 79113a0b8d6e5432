"""La capa de servicio: la única puerta al agente para la CLI y la API HTTP.

Responsabilidades que el checkpointer no cubre (ver ``docs/trampas.md``), cada una en
su subpaquete (``docs/arquitectura.md``, «Servicio y web»). De abajo arriba (el contrato
``servicio`` de import-linter lo comprueba):

- ``resultados``, ``textos``, ``personas``: los tipos que devuelve el servicio, lo que la
  aplicación escribe al cliente y quién es quién (cliente, encargado activo);
- ``aprobaciones/``: una aprobación pendiente: su fila en la cola, la autoridad que exige
  y las firmas que la cumplen, y los avisos a quien debe firmar;
- ``conversaciones/``: el turno del cliente (un mensaje nunca llega a un hilo en pausa),
  cómo se ejecuta el agente sobre un hilo (candado, límite, contexto) y qué se guarda al
  terminar (``desenlace``: una pausa se encola, una respuesta cierra el turno), los
  mensajes retenidos, el ``LISTEN`` de avisos, el ritmo (429) y lo que ve el portal;
- ``decisiones/``: lo que cierra una pausa: la decisión del encargado (validada y
  registrada antes de reanudar), «lo atiendo yo», la ficha, la caducidad, el conciliador
  (lo roto se repara) y el historial de lo decidido;
- ``politica/``: administrar umbrales y matriz de autoridad de una tienda (con separación
  de funciones) y la comprobación al arrancar de las operaciones declaradas;
- ``pagos/``: los reembolsos y cobros pendientes se completan solos; la pasarela con log;
- ``auditoria/``: qué salió sin firma, si las firmas y la política cuadran, si el libro
  cuadra con la pasarela, si lo que el agente dijo al cliente pasó (``afirmaciones``,
  ``verdad``: también la evaluación y las pruebas lo comprueban) y los movimientos (todo el
  dinero y la mercancía que se movió);
- ``entrada/``: la entrada del personal sin la CLI: casar un correo verificado con un
  encargado activo y los enlaces de entrada por correo (solo su hash, de un uso, con ritmo);
- ``alta/``: el alta sin SQL: tiendas, regiones y personas, con la separación de funciones
  y cada cambio anotado; el primer administrador (``alta_primera``, una vez);
- ``tienda/``: la ingesta del back office de la tienda (registros idempotentes por su id,
  lotes en JSON lines, claves de API con alcances);
- ``operador/``: lo que pide quien opera (salud y métricas, qué guarda un hilo, ids por
  prefijo, token y demo antes de que exista un servicio; la base y la demo para la web y la
  CLI);
- ``protocolo/``: lo que el protocolo de LangGraph (``/langgraph``) lee de la base: los hilos
  con su transcripción y su pausa, y sus ejecuciones (*runs*);
- ``fachada``: ``Servicio``, que compone todo eso; ``fabrica``: lo construye desde los
  ajustes; ``periodicas``: sus pasadas periódicas.

La web y la CLI importan cada cosa de su subpaquete, por su nombre
(``from agente.servicio.aprobaciones.firmas import FirmaParcial``); este ``__init__`` no
re-exporta nada. Lo que necesitan de más abajo (la base, el embebido, la demo, el dominio
de la política) se lo da un módulo del servicio: ``operador/plataforma``,
``operador/proceso``, ``operador/demo``, ``politica/dominio`` y ``entrada/correo``. El contrato ``solo-el-servicio`` de
``pyproject.toml`` no les deja importar ``agente.bd``, ``politicas``, ``herramientas`` ni
ningún otro paquete de debajo.
"""
