# Sourced by the image build's download steps: trust the build host's CA bundle when the build
# mounted it (see the Containerfile's header); otherwise the image's own CA certificates.
if [ -f /run/host-ca.crt ]; then
  export NODE_EXTRA_CA_CERTS=/run/host-ca.crt PIP_CERT=/run/host-ca.crt \
         SSL_CERT_FILE=/run/host-ca.crt REQUESTS_CA_BUNDLE=/run/host-ca.crt
fi
