"""Las conexiones HTTP ociosas de ``agente serve`` (``AGENTE_KEEPALIVE``).

Con los 5 s de uvicorn por defecto, un proxy o un cliente que reutiliza una conexión
ociosa más tiempo choca con el cierre del servidor: la petición sale por una conexión que
el servidor acaba de cerrar y el cliente la ve cortada (ReadError, o un 502 del proxy).
"""

from __future__ import annotations

import socket
import time

import pytest

from tests.apoyo.web_util import ServidorEnProceso

pytestmark = pytest.mark.temporal

PETICION = b"GET /readyz HTTP/1.1\r\nHost: agente\r\n\r\n"


def _respuesta(conexion: socket.socket) -> bytes:
    datos = b""
    while b"\r\n\r\n" not in datos:
        trozo = conexion.recv(4096)
        if not trozo:
            return datos  # el servidor cerró la conexión
        datos += trozo
    cabeceras, _, cuerpo = datos.partition(b"\r\n\r\n")
    largo = next(int(linea.split(b":", 1)[1]) for linea in cabeceras.split(b"\r\n")
                 if linea.lower().startswith(b"content-length:"))
    while len(cuerpo) < largo:
        cuerpo += conexion.recv(4096)
    return cabeceras


def test_una_conexion_ociosa_sigue_abierta_mas_alla_de_los_5_s_de_uvicorn(bd_url):
    with ServidorEnProceso(bd_url, AGENTE_KEEPALIVE="9") as servidor:
        servidor.esperar()
        with socket.create_connection(("127.0.0.1", servidor.puerto), timeout=10) as conexion:
            conexion.sendall(PETICION)
            assert _respuesta(conexion).startswith(b"HTTP/1.1 200")
            time.sleep(6.5)
            conexion.sendall(PETICION)
            assert _respuesta(conexion).startswith(b"HTTP/1.1 200"), "el servidor cerró la conexión ociosa"
